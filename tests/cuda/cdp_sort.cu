// Dynamic parallelism (CDP2): a recursive quicksort whose every partition
// launches the two halves as child grids, each into a stream of its own
// (cudaStreamNonBlocking), down to small ranges sorted by one thread. The
// host's cudaDeviceSynchronize waits for the whole tree (a parent grid is
// not complete before its descendants). Checked against the host's sort;
// the recursion must go deeper than two levels.
#include <cuda_runtime.h>
#include <algorithm>
#include <vector>
#include "check.h"

#define SMALL 32
#define MAX_DEPTH 20

__device__ void selection_sort(unsigned *d, int left, int right)
{
    for (int i = left; i <= right; i++) {
        int m = i;
        for (int j = i + 1; j <= right; j++)
            if (d[j] < d[m])
                m = j;
        unsigned t = d[i];
        d[i] = d[m];
        d[m] = t;
    }
}

__global__ void quicksort(unsigned *d, int left, int right, int depth, int *deepest, int *launch_errors)
{
    atomicMax(deepest, depth);
    if (right - left < SMALL || depth >= MAX_DEPTH) {
        selection_sort(d, left, right);
        return;
    }
    unsigned pivot = d[(left + right) / 2];
    int i = left, j = right;
    while (i <= j) {
        while (d[i] < pivot) i++;
        while (d[j] > pivot) j--;
        if (i <= j) {
            unsigned t = d[i];
            d[i] = d[j];
            d[j] = t;
            i++;
            j--;
        }
    }
    cudaStream_t s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    if (left < j)
        quicksort<<<1, 1, 0, s1>>>(d, left, j, depth + 1, deepest, launch_errors);
    if (cudaGetLastError() != cudaSuccess)
        atomicAdd(launch_errors, 1);
    if (i < right)
        quicksort<<<1, 1, 0, s2>>>(d, i, right, depth + 1, deepest, launch_errors);
    if (cudaGetLastError() != cudaSuccess)
        atomicAdd(launch_errors, 1);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
}

int main()
{
    const int n = 3000;
    std::vector<unsigned> h(n);
    unsigned x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        h[i] = x >> 8;
    }
    unsigned *d;
    int *counters;
    CHECK(cudaMalloc(&d, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&counters, 2 * sizeof(int)));
    CHECK(cudaMemcpy(d, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(counters, 0, 2 * sizeof(int)));
    quicksort<<<1, 1>>>(d, 0, n - 1, 0, counters, counters + 1);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> got(n);
    int c[2];
    CHECK(cudaMemcpy(got.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(c, counters, sizeof c, cudaMemcpyDeviceToHost));
    std::sort(h.begin(), h.end());
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += got[i] != h[i];
    EXPECT(wrong == 0);
    EXPECT(c[0] > 2);  // recursion deeper than two levels of child grids
    EXPECT(c[1] == 0); // no launch failed
    printf("deepest level %d, %d elements out of place\n", c[0], wrong);
    CHECK(cudaFree(d));
    CHECK(cudaFree(counters));
    return finish("cdp_sort");
}
