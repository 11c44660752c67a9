// Data-parallel training step over every device of the process (run under
// `kemu exec --devices 2|4|8`; built with -DNCCL_TEST_MPI, over the devices
// of every process under mpirun, nccl_test.h's open_comms): one thread, each device
// computes its gradient with a kernel on its stream, the gradients are
// summed (out of place) and averaged (in place) with ncclAllReduce inside
// ncclGroupStart/End, and a kernel after the collective, on the same
// stream, applies the step. Checked bit for bit against the CPU, which
// adds the ranks' gradients in rank order (kemu's documented order).
#include <vector>

#include "nccl_test.h"

static const int P = 10000; // parameters

__host__ __device__ float gradient(int rank, int j)
{
    return (float)((j * 7 + rank * 13) % 101 - 50) * 0.001f * (float)(1 + rank);
}

__global__ void compute_gradient(float *g, int rank, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n)
        g[j] = gradient(rank, j);
}

__global__ void sgd_step(float *w, const float *sum, float lr, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n)
        w[j] = w[j] - lr * sum[j];
}

int main()
{
    std::vector<ncclComm_t> comms;
    rank_layout L = open_comms(comms, 2);
    const int n = L.nranks, first = L.first, last = L.first + L.nlocal;
    int version = 0;
    NCHECK(ncclGetVersion(&version));
    EXPECT(version == NCCL_VERSION_CODE);
    for (int i = first; i < last; i++) {
        int count = -1, device = -1, rank = -1;
        NCHECK(ncclCommCount(comms[i], &count));
        NCHECK(ncclCommCuDevice(comms[i], &device));
        NCHECK(ncclCommUserRank(comms[i], &rank));
        EXPECT(count == n && device == L.device(i) && rank == i);
    }
    std::vector<cudaStream_t> streams(n);
    std::vector<float *> grad(n), sum(n), weights(n);
    std::vector<float> w0(P);
    for (int j = 0; j < P; j++)
        w0[j] = (float)(j % 17) * 0.25f;
    for (int i = first; i < last; i++) {
        CHECK(cudaSetDevice(L.device(i)));
        CHECK(cudaStreamCreate(&streams[i]));
        CHECK(cudaMalloc(&grad[i], P * sizeof(float)));
        CHECK(cudaMalloc(&sum[i], P * sizeof(float)));
        CHECK(cudaMalloc(&weights[i], P * sizeof(float)));
        CHECK(cudaMemcpyAsync(weights[i], w0.data(), P * sizeof(float), cudaMemcpyHostToDevice, streams[i]));
        compute_gradient<<<(P + 255) / 256, 256, 0, streams[i]>>>(grad[i], i, P);
        CHECK(cudaGetLastError());
    }
    NCHECK(ncclGroupStart());
    for (int i = first; i < last; i++)
        NCHECK(ncclAllReduce(grad[i], sum[i], P, ncclFloat, ncclSum, comms[i], streams[i]));
    for (int i = first; i < last; i++)
        NCHECK(ncclAllReduce(grad[i], grad[i], P, ncclFloat, ncclAvg, comms[i], streams[i]));
    NCHECK(ncclGroupEnd());
    const float lr = 0.5f;
    for (int i = first; i < last; i++) {
        CHECK(cudaSetDevice(L.device(i)));
        sgd_step<<<(P + 255) / 256, 256, 0, streams[i]>>>(weights[i], sum[i], lr, P);
        CHECK(cudaGetLastError());
    }

    // the CPU: rank 0 + rank 1 + ... in float, then / n for the average
    std::vector<float> want_sum(P), want_avg(P), want_w(P);
    for (int j = 0; j < P; j++) {
        float acc = gradient(0, j);
        for (int r = 1; r < n; r++)
            acc = acc + gradient(r, j);
        want_sum[j] = acc;
        want_avg[j] = acc / (float)n;
        want_w[j] = w0[j] - lr * acc;
    }
    std::vector<float> got(P);
    for (int i = first; i < last; i++) {
        CHECK(cudaSetDevice(L.device(i)));
        CHECK(cudaStreamSynchronize(streams[i]));
        CHECK(cudaMemcpy(got.data(), sum[i], P * sizeof(float), cudaMemcpyDeviceToHost));
        EXPECT(memcmp(got.data(), want_sum.data(), P * sizeof(float)) == 0);
        CHECK(cudaMemcpy(got.data(), grad[i], P * sizeof(float), cudaMemcpyDeviceToHost));
        EXPECT(memcmp(got.data(), want_avg.data(), P * sizeof(float)) == 0);
        CHECK(cudaMemcpy(got.data(), weights[i], P * sizeof(float), cudaMemcpyDeviceToHost));
        for (int j = 0; j < P; j++)
            EXPECT(close_to(got[j], want_w[j], 1e-6, 1e-6));
    }
    for (int i = first; i < last; i++) {
        CHECK(cudaSetDevice(L.device(i)));
        CHECK(cudaFree(grad[i]));
        CHECK(cudaFree(sum[i]));
        CHECK(cudaFree(weights[i]));
        CHECK(cudaStreamDestroy(streams[i]));
        NCHECK(ncclCommDestroy(comms[i]));
    }
    return close_comms("nccl_allreduce");
}
