// Corpus: a Needleman-Wunsch style wavefront over a shared-memory tile
// (the pattern of Rodinia's nw): threads walk anti-diagonals reading their
// up, left and up-left neighbours, so nvcc addresses shared memory through
// 32-bit registers with negative offsets. Self-checking against the same
// recurrence on the host.
#include <cstdio>

#define B 16
#define PENALTY 10

__device__ int best(int a, int b, int c)
{
    int m = a > b ? a : b;
    return m > c ? m : c;
}

/* One block scores one B x B tile whose first row and column are given. */
__global__ void nw_tile(const int *ref, int *score, int cols)
{
    __shared__ int t[B + 1][B + 1];
    __shared__ int r[B][B];
    int tx = threadIdx.x;
    for (int y = 0; y < B; y++)
        r[y][tx] = ref[(y + 1) * cols + tx + 1];
    t[tx + 1][0] = score[(tx + 1) * cols];
    if (tx == 0)
        t[0][0] = score[0];
    t[0][tx + 1] = score[tx + 1];
    __syncthreads();
    for (int m = 0; m < B; m++) {
        if (tx <= m) {
            int x = tx + 1, y = m - tx + 1;
            t[y][x] = best(t[y - 1][x - 1] + r[y - 1][x - 1], t[y][x - 1] - PENALTY, t[y - 1][x] - PENALTY);
        }
        __syncthreads();
    }
    for (int m = B - 2; m >= 0; m--) {
        if (tx <= m) {
            int x = tx + B - m, y = B - tx;
            t[y][x] = best(t[y - 1][x - 1] + r[y - 1][x - 1], t[y][x - 1] - PENALTY, t[y - 1][x] - PENALTY);
        }
        __syncthreads();
    }
    for (int y = 0; y < B; y++)
        score[(y + 1) * cols + tx + 1] = t[y + 1][tx + 1];
}

int main()
{
    const int cols = B + 1, n = cols * cols;
    int href[n], hs[n], want[n];
    for (int i = 0; i < n; i++)
        href[i] = (i * 7919) % 21 - 10;
    for (int i = 0; i < n; i++)
        hs[i] = 0;
    for (int i = 0; i < cols; i++) {
        hs[i] = -i * PENALTY;
        hs[i * cols] = -i * PENALTY;
    }
    for (int i = 0; i < n; i++)
        want[i] = hs[i];
    for (int y = 1; y < cols; y++)
        for (int x = 1; x < cols; x++) {
            int a = want[(y - 1) * cols + x - 1] + href[y * cols + x], b = want[y * cols + x - 1] - PENALTY,
                c = want[(y - 1) * cols + x] - PENALTY;
            int m = a > b ? a : b;
            want[y * cols + x] = m > c ? m : c;
        }
    int *ref, *s;
    cudaMalloc(&ref, sizeof href);
    cudaMalloc(&s, sizeof hs);
    cudaMemcpy(ref, href, sizeof href, cudaMemcpyHostToDevice);
    cudaMemcpy(s, hs, sizeof hs, cudaMemcpyHostToDevice);
    nw_tile<<<1, B>>>(ref, s, cols);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(hs, s, sizeof hs, cudaMemcpyDeviceToHost);
    int bad = e != cudaSuccess;
    if (e != cudaSuccess)
        printf("launch: %s\n", cudaGetErrorString(e));
    for (int i = 0; i < n; i++)
        if (hs[i] != want[i] && bad++ < 5)
            printf("cell %d: %d, want %d\n", i, hs[i], want[i]);
    printf("wavefront: %s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
