// A tensor-parallel MLP layer, Z = relu(X W1) W2, one host thread per
// device (ncclGetUniqueId once, ncclCommInitRank in every thread): each
// rank holds a block of X's rows, a block of W1's columns and the matching
// block of W2's rows. ncclAllGather assembles X on every rank, each rank
// computes its partial product relu(X W1_r) W2_r with kernels on its
// stream, and ncclReduceScatter sums the partials and leaves rank r the
// r-th block of Z's rows; kernels and collectives share one stream per
// rank with no synchronization in between. The values are small integers,
// so every sum is exact and Z is compared exactly with the CPU's.
#include <pthread.h>
#include <vector>

#include "nccl_test.h"

static const int K = 64, N = 48, ROWS_PER_RANK = 8, H_PER_RANK = 32;

__global__ void matmul(const float *a, const float *b, float *c, int m, int k, int n, int relu)
{
    int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m || j >= n)
        return;
    float acc = 0;
    for (int p = 0; p < k; p++)
        acc += a[i * k + p] * b[p * n + j];
    c[i * n + j] = relu && acc < 0 ? 0 : acc;
}

static float x_value(int i, int p) { return (float)((i * 5 + p * 3) % 5 - 2); }
static float w1_value(int p, int h) { return (float)((p * 7 + h * 11) % 3 - 1); }
static float w2_value(int h, int j) { return (float)((h * 13 + j * 5) % 3 - 1) * 0.5f; }

struct rank_work {
    int rank, n;
    ncclUniqueId id;
    std::vector<float> z; // the rank's block of Z's rows
    int half_sum, half_rank;
    ncclResult_t nccl;
    cudaError_t cuda;
};

static void *run(void *arg)
{
    rank_work *w = (rank_work *)arg;
    int r = w->rank, n = w->n, B = ROWS_PER_RANK * n, H = H_PER_RANK * n;
    w->cuda = cudaSetDevice(r);
    if (w->cuda)
        return NULL;
    ncclComm_t comm;
    if ((w->nccl = ncclCommInitRank(&comm, n, w->id, r)))
        return NULL;
    cudaStream_t stream;
    float *x_block, *x, *w1, *w2, *y, *partial, *z;
    cudaStreamCreate(&stream);
    cudaMalloc(&x_block, ROWS_PER_RANK * K * sizeof(float));
    cudaMalloc(&x, B * K * sizeof(float));
    cudaMalloc(&w1, K * H_PER_RANK * sizeof(float));
    cudaMalloc(&w2, H_PER_RANK * N * sizeof(float));
    cudaMalloc(&y, B * H_PER_RANK * sizeof(float));
    cudaMalloc(&partial, B * N * sizeof(float));
    cudaMalloc(&z, ROWS_PER_RANK * N * sizeof(float));
    std::vector<float> h_x(ROWS_PER_RANK * K), h_w1(K * H_PER_RANK), h_w2(H_PER_RANK * N);
    for (int i = 0; i < ROWS_PER_RANK; i++)
        for (int p = 0; p < K; p++)
            h_x[i * K + p] = x_value(r * ROWS_PER_RANK + i, p);
    for (int p = 0; p < K; p++)
        for (int h = 0; h < H_PER_RANK; h++)
            h_w1[p * H_PER_RANK + h] = w1_value(p, r * H_PER_RANK + h);
    for (int h = 0; h < H_PER_RANK; h++)
        for (int j = 0; j < N; j++)
            h_w2[h * N + j] = w2_value(r * H_PER_RANK + h, j);
    cudaMemcpyAsync(x_block, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(w1, h_w1.data(), h_w1.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(w2, h_w2.data(), h_w2.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
    if ((w->nccl = ncclAllGather(x_block, x, ROWS_PER_RANK * K, ncclFloat, comm, stream)))
        return NULL;
    dim3 block(16, 16);
    matmul<<<dim3((H_PER_RANK + 15) / 16, (B + 15) / 16), block, 0, stream>>>(x, w1, y, B, K, H_PER_RANK, 1);
    matmul<<<dim3((N + 15) / 16, (B + 15) / 16), block, 0, stream>>>(y, w2, partial, B, H_PER_RANK, N, 0);
    if ((w->nccl = ncclReduceScatter(partial, z, ROWS_PER_RANK * N, ncclFloat, ncclSum, comm, stream)))
        return NULL;
    w->z.resize(ROWS_PER_RANK * N);
    cudaMemcpyAsync(w->z.data(), z, w->z.size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
    w->cuda = cudaStreamSynchronize(stream);
    (void)H;
    // then each thread splits its communicator (even and odd ranks) and
    // sums its rank over the new one
    ncclComm_t half;
    if ((w->nccl = ncclCommSplit(comm, r % 2, r, &half, NULL)))
        return NULL;
    int *value;
    cudaMalloc(&value, sizeof(int));
    cudaMemcpy(value, &r, sizeof r, cudaMemcpyHostToDevice);
    if ((w->nccl = ncclAllReduce(value, value, 1, ncclInt32, ncclSum, half, stream)))
        return NULL;
    cudaMemcpyAsync(&w->half_sum, value, sizeof(int), cudaMemcpyDeviceToHost, stream);
    ncclCommUserRank(half, &w->half_rank);
    w->cuda = cudaStreamSynchronize(stream);
    cudaFree(value);
    ncclCommDestroy(half);
    cudaFree(x_block), cudaFree(x), cudaFree(w1), cudaFree(w2), cudaFree(y), cudaFree(partial), cudaFree(z);
    cudaStreamDestroy(stream);
    w->nccl = ncclCommDestroy(comm);
    return NULL;
}

int main()
{
    int n = device_count(2);
    ncclUniqueId id;
    NCHECK(ncclGetUniqueId(&id));
    std::vector<rank_work> work(n);
    std::vector<pthread_t> threads(n);
    for (int r = 0; r < n; r++) {
        work[r].rank = r;
        work[r].n = n;
        work[r].id = id;
        work[r].nccl = ncclSuccess;
        work[r].cuda = cudaSuccess;
        work[r].half_sum = work[r].half_rank = -1;
        pthread_create(&threads[r], NULL, run, &work[r]);
    }
    for (int r = 0; r < n; r++)
        pthread_join(threads[r], NULL);

    int B = ROWS_PER_RANK * n, H = H_PER_RANK * n;
    std::vector<float> y(B * H), z(B * N);
    for (int i = 0; i < B; i++)
        for (int h = 0; h < H; h++) {
            float acc = 0;
            for (int p = 0; p < K; p++)
                acc += x_value(i, p) * w1_value(p, h);
            y[i * H + h] = acc < 0 ? 0 : acc;
        }
    for (int i = 0; i < B; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int h = 0; h < H; h++)
                acc += y[i * H + h] * w2_value(h, j);
            z[i * N + j] = acc;
        }
    int nonzero = 0;
    for (int r = 0; r < n; r++) {
        EXPECT(work[r].nccl == ncclSuccess);
        EXPECT(work[r].cuda == cudaSuccess);
        if (work[r].z.size() != (size_t)(ROWS_PER_RANK * N)) {
            failures++;
            continue;
        }
        for (int i = 0; i < ROWS_PER_RANK * N; i++) {
            EXPECT(work[r].z[i] == z[r * ROWS_PER_RANK * N + i]);
            nonzero += work[r].z[i] != 0;
        }
    }
    EXPECT(nonzero > B * N / 2);
    for (int r = 0; r < n; r++) {
        int want = 0;
        for (int q = r % 2; q < n; q += 2)
            want += q;
        EXPECT(work[r].half_sum == want);
        EXPECT(work[r].half_rank == r / 2);
    }
    return finish("nccl_tensor_parallel");
}
